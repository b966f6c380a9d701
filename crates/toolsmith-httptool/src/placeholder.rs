//! The endpoint placeholder language: `{{param}}` and `{{store.key}}`, nothing else.
//!
//! Endpoint templates (URL, headers, body) are not Jinja: they are split once into literal text
//! and references, and each reference is replaced by a value in a single pass, so a value that
//! itself contains `{{…}}` is data and is never expanded again.

/// A piece of an endpoint template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    Lit(&'a str),
    Ref(Ref<'a>),
}

/// What a placeholder refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ref<'a> {
    /// A parameter of the tool.
    Param(&'a str),
    /// A configuration value of the owner (`store.key`), looked up through `ConfigLookup`.
    Store(&'a str),
}

impl Ref<'_> {
    /// The placeholder as written, for messages.
    pub(crate) fn display(&self) -> String {
        match self {
            Self::Param(name) => format!("{{{{{name}}}}}"),
            Self::Store(key) => format!("{{{{store.{key}}}}}"),
        }
    }
}

/// A template that is not in the placeholder language.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PlaceholderError {
    #[error("unterminated placeholder starting at byte {at}")]
    Unterminated { at: usize },
    #[error(
        "placeholder '{{{{{text}}}}}' is not a parameter name or store.<key> (endpoint templates take no expressions or filters)"
    )]
    Invalid { text: String },
}

const MAX_KEY_LEN: usize = 128;

/// Splits `template` into literal text and references.
pub(crate) fn parse(template: &str) -> Result<Vec<Piece<'_>>, PlaceholderError> {
    let mut pieces = Vec::new();
    let mut rest = template;
    let mut offset = 0;
    while let Some((lit, after_open)) = rest.split_once("{{") {
        if !lit.is_empty() {
            pieces.push(Piece::Lit(lit));
        }
        let Some((inner, tail)) = after_open.split_once("}}") else {
            return Err(PlaceholderError::Unterminated {
                at: offset + lit.len(),
            });
        };
        pieces.push(Piece::Ref(classify(inner.trim())?));
        offset += rest.len() - tail.len();
        rest = tail;
    }
    if !rest.is_empty() {
        pieces.push(Piece::Lit(rest));
    }
    Ok(pieces)
}

/// The references of a template, in order (an invalid template has none).
pub(crate) fn refs(template: &str) -> Result<Vec<Ref<'_>>, PlaceholderError> {
    Ok(parse(template)?
        .into_iter()
        .filter_map(|piece| match piece {
            Piece::Ref(r) => Some(r),
            Piece::Lit(_) => None,
        })
        .collect())
}

/// Whether a config key, parameter or header name looks like it holds a credential: one of its
/// words (split at `_`, `-`, `.` and lower-to-upper case changes) is a credential word.
pub(crate) fn is_secret_like(name: &str) -> bool {
    const WORDS: [&str; 14] = [
        "key",
        "apikey",
        "secret",
        "token",
        "password",
        "passwd",
        "pwd",
        "credential",
        "credentials",
        "auth",
        "authorization",
        "bearer",
        "cookie",
        "signature",
    ];
    words(name).iter().any(|w| WORDS.contains(&w.as_str()))
}

fn words(name: &str) -> Vec<String> {
    let mut res = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            res.push(std::mem::take(&mut cur));
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower {
            res.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        cur.push(c.to_ascii_lowercase());
    }
    res.push(cur);
    res.retain(|w| !w.is_empty());
    res
}

/// Whether `name` is a parameter or mapping name: `^[A-Za-z_][A-Za-z0-9_]*$`, at most 64.
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    name.len() <= 64
        && (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `key` is a valid config key: `[A-Za-z0-9_.-]`, 1 to 128 characters.
pub(crate) fn is_config_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= MAX_KEY_LEN
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

fn classify(inner: &str) -> Result<Ref<'_>, PlaceholderError> {
    if let Some(key) = inner.strip_prefix("store.") {
        if is_config_key(key) {
            return Ok(Ref::Store(key));
        }
    } else if is_identifier(inner) {
        return Ok(Ref::Param(inner));
    }
    Err(PlaceholderError::Invalid {
        text: inner.chars().take(80).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_literals_and_refs() {
        let pieces = parse("https://{{ store.host }}/a/{{id}}?q={{q}}").unwrap();
        assert_eq!(
            pieces,
            vec![
                Piece::Lit("https://"),
                Piece::Ref(Ref::Store("host")),
                Piece::Lit("/a/"),
                Piece::Ref(Ref::Param("id")),
                Piece::Lit("?q="),
                Piece::Ref(Ref::Param("q")),
            ]
        );
    }

    #[test]
    fn refuses_expressions_and_unterminated() {
        assert_eq!(
            parse("/a/{{ id | upper }}").unwrap_err(),
            PlaceholderError::Invalid {
                text: "id | upper".into()
            }
        );
        assert_eq!(
            parse("/a/{{id").unwrap_err(),
            PlaceholderError::Unterminated { at: 3 }
        );
        assert!(parse("{{store.}}").is_err());
        assert!(parse("{{}}").is_err());
    }

    #[test]
    fn secret_like_names() {
        for name in [
            "loyalty_api_key",
            "AccessToken",
            "x-api-key",
            "APIKEY",
            "db.password",
            "Authorization",
        ] {
            assert!(is_secret_like(name), "{name}");
        }
        for name in [
            "booking_domain",
            "keyword",
            "author",
            "monkey_count",
            "tokenizer_mode",
        ] {
            assert!(!is_secret_like(name), "{name}");
        }
    }
}
