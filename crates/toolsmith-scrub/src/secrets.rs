//! Known secret values: the forms a secret can take in output (exact, JSON-escaped, URL-encoded
//! as RFC 3986 and as JavaScript's `encodeURI` / `encodeURIComponent` write it, hex, base64 in
//! both alphabets, alone or inside a longer base64 text) and the Aho-Corasick automaton that
//! finds them all in one pass.
//!
//! Built per request from that request's secrets only; nothing here is shared between requests.

use std::collections::BTreeSet;
use std::ops::Range;

use aho_corasick::{AhoCorasick, MatchKind};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use crate::ScrubError;

/// Secrets shorter than this many bytes are ignored: a value like `1234` or `admin` would redact
/// ordinary text everywhere, and the credential patterns still cover it after a credential key.
pub const MIN_SECRET_LEN: usize = 6;

/// Secrets longer than this many bytes are refused with an error rather than silently ignored.
pub const MAX_SECRET_LEN: usize = 64 * 1024;

/// An encoded form shorter than this is not searched for (a 2-character base64 fragment would
/// match anywhere).
const MIN_FORM_LEN: usize = 8;

/// The automaton over every form of every known secret.
pub(crate) struct KnownSecrets {
    automaton: Option<AhoCorasick>,
    n_forms: usize,
}

impl KnownSecrets {
    pub(crate) fn build(secrets: impl IntoIterator<Item = String>) -> Result<Self, ScrubError> {
        let mut forms: BTreeSet<String> = BTreeSet::new();
        for secret in secrets {
            if secret.len() > MAX_SECRET_LEN {
                return Err(ScrubError::SecretTooLong {
                    len: secret.len(),
                    max: MAX_SECRET_LEN,
                });
            }
            if secret.len() < MIN_SECRET_LEN {
                continue;
            }
            forms.extend(forms_of(&secret));
        }
        let n_forms = forms.len();
        if forms.is_empty() {
            return Ok(Self {
                automaton: None,
                n_forms,
            });
        }
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&forms)
            .map_err(|e| ScrubError::Automaton(e.to_string()))?;
        Ok(Self {
            automaton: Some(automaton),
            n_forms,
        })
    }

    /// How many distinct forms are searched for.
    pub(crate) fn n_forms(&self) -> usize {
        self.n_forms
    }

    /// Every occurrence of a known form in `text`, in order, non-overlapping.
    pub(crate) fn find(&self, text: &str, spans: &mut Vec<Range<usize>>) {
        if let Some(automaton) = &self.automaton {
            spans.extend(automaton.find_iter(text).map(|m| m.range()));
        }
    }
}

/// Every searchable form of one secret.
fn forms_of(secret: &str) -> Vec<String> {
    let mut forms = vec![secret.to_owned()];
    if let Ok(quoted) = serde_json::to_string(secret)
        && let Some(inner) = quoted.strip_prefix('"').and_then(|q| q.strip_suffix('"'))
    {
        forms.push(inner.to_owned());
    }
    let encoded = percent_encode(secret, true);
    forms.push(percent_encode(secret, false));
    forms.push(encoded.replace("%20", "+"));
    forms.push(encoded);
    forms.push(js_uri_encode(secret, ENCODE_URI_KEEPS));
    forms.push(js_uri_encode(secret, ENCODE_URI_COMPONENT_KEEPS));
    let hex: String = secret.bytes().map(|b| format!("{b:02x}")).collect();
    forms.push(hex.to_ascii_uppercase());
    forms.push(hex);
    for engine in [STANDARD, URL_SAFE] {
        forms.push(engine.encode(secret));
    }
    for engine in [STANDARD_NO_PAD, URL_SAFE_NO_PAD] {
        forms.push(engine.encode(secret));
        forms.extend(embedded_base64(secret.as_bytes(), &engine));
    }
    forms.retain(|form| form.len() >= MIN_FORM_LEN.min(secret.len()));
    forms
}

/// The part of the base64 text that the secret alone decides, for each of the three alignments the
/// secret can have inside a longer encoded text (`user:secret` in a Basic header, a secret inside an
/// encoded JSON document).
fn embedded_base64(secret: &[u8], engine: &impl base64::Engine) -> Vec<String> {
    let mut res = Vec::new();
    for offset in 0..3usize {
        let mut buf = vec![0u8; offset];
        buf.extend_from_slice(secret);
        let encoded = engine.encode(&buf);
        // Characters whose six bits include a prefix bit, or a bit after the secret, depend on
        // the surroundings: keep only the ones inside the secret's bits.
        let start = (8 * offset).div_ceil(6);
        let end = (8 * (offset + secret.len())) / 6;
        if end > start
            && end - start >= MIN_FORM_LEN
            && let Some(inner) = encoded.get(start..end)
        {
            res.push(inner.to_owned());
        }
    }
    res
}

/// Every byte but the URL "unreserved" set (letters, digits, `-`, `.`, `_`, `~`).
const NOT_UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Percent-encodes every byte except the URL "unreserved" set, with upper- or lower-case hex.
fn percent_encode(secret: &str, upper: bool) -> String {
    let encoded = utf8_percent_encode(secret, NOT_UNRESERVED);
    if upper {
        return encoded.to_string();
    }
    // The crate writes upper-case hex; only the escapes are lowered, never the kept characters.
    encoded
        .map(|piece| {
            if piece.starts_with('%') {
                piece.to_ascii_lowercase()
            } else {
                piece.to_owned()
            }
        })
        .collect()
}

/// The punctuation JavaScript's `encodeURI` leaves as it is (besides letters and digits).
const ENCODE_URI_KEEPS: &[u8] = b";,/?:@&=+$-_.!~*'()#";

/// The punctuation `encodeURIComponent` leaves as it is (besides letters and digits).
const ENCODE_URI_COMPONENT_KEEPS: &[u8] = b"-_.!~*'()";

/// The secret as JavaScript's `encodeURI` or `encodeURIComponent` writes it: UTF-8 bytes as
/// upper-case `%XX`, except letters, digits and the punctuation in `keeps`.
fn js_uri_encode(secret: &str, keeps: &[u8]) -> String {
    let mut res = String::with_capacity(secret.len() * 3);
    for byte in secret.bytes() {
        if byte.is_ascii_alphanumeric() || keeps.contains(&byte) {
            res.push(char::from(byte));
        } else {
            res.push_str(&format!("%{byte:02X}"));
        }
    }
    res
}
