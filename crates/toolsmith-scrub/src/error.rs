//! The scrubber's error type.

/// Why a [`crate::Scrubber`] could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScrubError {
    /// A known secret is longer than [`crate::MAX_SECRET_LEN`].
    #[error("a secret of {len} bytes is longer than the {max}-byte limit")]
    SecretTooLong { len: usize, max: usize },
    /// The credential patterns failed to compile (a bug, never input-dependent).
    #[error("credential patterns failed to compile: {0}")]
    Patterns(String),
    /// The known-secret automaton could not be built.
    #[error("secret matcher could not be built: {0}")]
    Automaton(String),
}

impl ScrubError {
    /// A stable machine-readable code.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::SecretTooLong { .. } => "secret_too_long",
            Self::Patterns(_) => "scrub_patterns",
            Self::Automaton(_) => "scrub_automaton",
        }
    }
}
