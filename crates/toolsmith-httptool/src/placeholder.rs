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
    while let Some(start) = rest.find("{{") {
        if start > 0 {
            pieces.push(Piece::Lit(&rest[..start]));
        }
        let inner_start = start + 2;
        let Some(len) = rest[inner_start..].find("}}") else {
            return Err(PlaceholderError::Unterminated { at: offset + start });
        };
        let inner = rest[inner_start..inner_start + len].trim();
        pieces.push(Piece::Ref(classify(inner)?));
        let consumed = inner_start + len + 2;
        rest = &rest[consumed..];
        offset += consumed;
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

/// Whether a config key or parameter name looks like it holds a credential.
pub(crate) fn is_secret_like(name: &str) -> bool {
    const MARKERS: [&str; 8] = [
        "key",
        "secret",
        "token",
        "password",
        "passwd",
        "credential",
        "auth",
        "bearer",
    ];
    let lower = name.to_ascii_lowercase();
    MARKERS.iter().any(|m| lower.contains(m))
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
        assert!(is_secret_like("loyalty_api_key"));
        assert!(is_secret_like("AccessToken"));
        assert!(!is_secret_like("booking_domain"));
    }
}
