//! [`Scrubber`]: finds credential-pattern and known-secret spans in a text, merges them, and
//! writes the redacted text.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::patterns::{Hit, PATTERNS, Patterns};
use crate::secrets::KnownSecrets;
use crate::{REDACTED, ScrubError};

/// Redacts credentials from text and JSON; one per request.
///
/// Holds only the secrets it was built with, so one user's secrets are never matched into another
/// user's output. Cheap to share across threads; [`Scrubber::redactions`] counts every redaction it
/// made, for metrics.
pub struct Scrubber {
    /// The credential patterns; `None` for a scrubber of known secrets only
    /// ([`Scrubber::secrets_only`]).
    patterns: Option<&'static Patterns>,
    pub(crate) secrets: KnownSecrets,
    redactions: AtomicU64,
}

impl Scrubber {
    /// A scrubber for the given known secrets.
    /// Secrets shorter than [`crate::MIN_SECRET_LEN`] bytes are ignored.
    ///
    /// # Errors
    /// [`ScrubError::SecretTooLong`] for a secret over [`crate::MAX_SECRET_LEN`] bytes.
    pub fn new(secrets: impl IntoIterator<Item = String>) -> Result<Self, ScrubError> {
        let patterns = PATTERNS
            .as_ref()
            .map_err(|e| ScrubError::Patterns(e.to_string()))?;
        Ok(Self {
            patterns: Some(patterns),
            secrets: KnownSecrets::build(secrets)?,
            redactions: AtomicU64::new(0),
        })
    }

    /// A scrubber that redacts the given known secrets (in every form of [`Scrubber::new`]) and
    /// nothing else: no credential patterns, no values under credential-like keys.
    ///
    /// For output that is the user's own stored data (a note, a file of their workspace, a
    /// generated password): a pattern would replace the user's value with [`REDACTED`], and a
    /// model that writes back what it read would destroy it. The platform's secrets (the exact
    /// values the caller's Config Center holds) still never leave.
    ///
    /// # Errors
    /// [`ScrubError::SecretTooLong`] for a secret over [`crate::MAX_SECRET_LEN`] bytes.
    pub fn secrets_only(secrets: impl IntoIterator<Item = String>) -> Result<Self, ScrubError> {
        Ok(Self {
            patterns: None,
            secrets: KnownSecrets::build(secrets)?,
            redactions: AtomicU64::new(0),
        })
    }

    /// Whether this scrubber applies the credential patterns (false for
    /// [`Scrubber::secrets_only`]).
    #[must_use]
    pub fn applies_patterns(&self) -> bool {
        self.patterns.is_some()
    }

    /// A scrubber with credential patterns only.
    ///
    /// # Errors
    /// Only if the built-in patterns fail to compile (a bug).
    pub fn patterns_only() -> Result<Self, ScrubError> {
        Self::new(std::iter::empty())
    }

    /// `text` with every credential replaced by [`REDACTED`]; borrowed when nothing was found.
    #[must_use]
    pub fn scrub_str<'t>(&self, text: &'t str) -> Cow<'t, str> {
        self.scrub_counted(text).0
    }

    /// Like [`Scrubber::scrub_str`], also returning how many spans were redacted.
    #[must_use]
    pub fn scrub_counted<'t>(&self, text: &'t str) -> (Cow<'t, str>, usize) {
        let spans = self.spans(text);
        if spans.is_empty() {
            return (Cow::Borrowed(text), 0);
        }
        self.count(spans.len());
        let mut res = String::with_capacity(text.len());
        let mut cursor = 0;
        for span in &spans {
            res.push_str(text.get(cursor..span.start).unwrap_or_default());
            res.push_str(REDACTED);
            cursor = span.end;
        }
        res.push_str(text.get(cursor..).unwrap_or_default());
        (Cow::Owned(res), spans.len())
    }

    /// Every redaction this scrubber has made so far.
    #[must_use]
    pub fn redactions(&self) -> u64 {
        self.redactions.load(Ordering::Relaxed)
    }

    /// How many forms of known secrets this scrubber searches for (for diagnostics).
    #[must_use]
    pub fn n_secret_forms(&self) -> usize {
        self.secrets.n_forms()
    }

    pub(crate) fn count(&self, n: usize) {
        self.redactions
            .fetch_add(u64::try_from(n).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// The merged, sorted spans to redact.
    fn spans(&self, text: &str) -> Vec<Range<usize>> {
        let mut hits: Vec<Hit> = Vec::new();
        if let Some(patterns) = self.patterns {
            patterns.find(text, &mut hits);
        }
        let mut spans: Vec<Range<usize>> = hits.into_iter().map(|hit| hit.span).collect();
        self.secrets.find(text, &mut spans);
        // Both finders report spans on character boundaries; widening keeps slicing safe even if
        // that ever stopped being true.
        for span in &mut spans {
            span.end = span.end.min(text.len());
            while !text.is_char_boundary(span.start) {
                span.start -= 1;
            }
            while !text.is_char_boundary(span.end) {
                span.end += 1;
            }
        }
        merge(spans)
    }

    #[cfg(test)]
    pub(crate) fn rules_hit(&self, text: &str) -> Vec<&'static str> {
        let mut hits = Vec::new();
        if let Some(patterns) = self.patterns {
            patterns.find(text, &mut hits);
        }
        hits.into_iter().map(|hit| hit.rule).collect()
    }
}

/// Sorts spans and unions the overlapping ones. Empty spans are dropped.
fn merge(mut spans: Vec<Range<usize>>) -> Vec<Range<usize>> {
    spans.retain(|span| span.start < span.end);
    spans.sort_unstable_by_key(|span| (span.start, span.end));
    let mut res: Vec<Range<usize>> = Vec::with_capacity(spans.len());
    for span in spans {
        match res.last_mut() {
            Some(last) if span.start < last.end => last.end = last.end.max(span.end),
            _ => res.push(span),
        }
    }
    res
}
