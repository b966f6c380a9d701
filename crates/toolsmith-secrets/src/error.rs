//! What can go wrong with the master key or a sealed value; each variant has a stable `code()`.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    /// `TOOLSMITH_SECRET_KEY` is set but is not 32 bytes in hex or base64.
    #[error(
        "TOOLSMITH_SECRET_KEY is not a usable key: {reason}; it must be 32 bytes written as 64 hex digits or as base64 (make one with `openssl rand -base64 32`)"
    )]
    BadEnvKey { reason: String },
    /// The key file exists but must not be used (permissions, type, content).
    #[error("the key file {path} cannot be used: {reason}")]
    BadKeyFile { path: PathBuf, reason: String },
    /// Reading or creating the key file failed.
    #[error("cannot {action} the key file {path}: {source}")]
    KeyFileIo {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The operating system's random source failed.
    #[error("the system random source failed: {0}")]
    Random(String),
    /// The text is not a sealed value this build can read (bad prefix, bad base64, too short).
    #[error("the stored secret is malformed: {0}")]
    Malformed(String),
    /// Authentication failed: wrong key, altered bytes, or a value moved from another place.
    #[error(
        "cannot decrypt the secret of field '{field}': wrong key, altered data, or a value copied from another entry"
    )]
    Decrypt { field: String },
    /// A value is too large to seal.
    #[error("the secret is {len} bytes, over the limit of {max}")]
    TooLarge { len: usize, max: usize },
}

impl SecretError {
    /// A stable, machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            SecretError::BadEnvKey { .. } => "secret_key_invalid",
            SecretError::BadKeyFile { .. } => "secret_key_file_refused",
            SecretError::KeyFileIo { .. } => "secret_key_file_io",
            SecretError::Random(_) => "random_source_failed",
            SecretError::Malformed(_) => "secret_malformed",
            SecretError::Decrypt { .. } => "secret_decrypt_failed",
            SecretError::TooLarge { .. } => "secret_too_large",
        }
    }
}
