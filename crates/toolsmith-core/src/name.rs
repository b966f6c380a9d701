//! The naming rule for custom tools: `^[a-z][a-z0-9_]*$`, at most 64 characters, and not in
//! the form of a tool id (`tool_` and 16 hex digits), which every interface reads as an id.

/// Longest name a custom tool may have.
pub const MAX_NAME_LEN: usize = 64;

/// Names the MCP face uses for its own tools (the control plane and the discovery meta-tools).
/// A custom tool may not take one: MCP clients would see two tools of one name.
pub const RESERVED_NAMES: [&str; 11] = [
    "create_tool",
    "list_custom_tools",
    "get_custom_tool",
    "update_custom_tool",
    "delete_custom_tool",
    "toggle_custom_tool",
    "run_js_ephemeral",
    "search_tools",
    "get_tool_help",
    "use_tool",
    "batch_use_tool",
];

/// Whether `name` belongs to one of Toolsmith's own MCP tools.
pub fn is_reserved(name: &str) -> bool {
    RESERVED_NAMES.contains(&name)
}

/// Whether `text` has the form of a custom tool id: `tool_` and 16 hex digits.
pub fn is_tool_id(text: &str) -> bool {
    text.strip_prefix("tool_")
        .is_some_and(|hex| hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Why a name was refused, phrased for the person or model that chose it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("tool name is empty")]
    Empty,
    #[error("tool name is {len} characters long, over the limit of {MAX_NAME_LEN}")]
    TooLong { len: usize },
    #[error(
        "tool name '{name}' is invalid: it must start with a lowercase letter and contain only lowercase letters, digits and underscores (^[a-z][a-z0-9_]*$)"
    )]
    BadCharacters { name: String },
    #[error(
        "tool name '{name}' has the form of a tool id (tool_ and 16 hex digits), so it could never be addressed by name; choose another name"
    )]
    LooksLikeId { name: String },
}

/// Checks a custom tool name against the rule.
pub fn validate_custom_name(name: &str) -> Result<(), NameError> {
    let Some(first) = name.chars().next() else {
        return Err(NameError::Empty);
    };
    let len = name.chars().count();
    if len > MAX_NAME_LEN {
        return Err(NameError::TooLong { len });
    }
    let rest_ok = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !first.is_ascii_lowercase() || !rest_ok {
        let shown: String = name.chars().take(MAX_NAME_LEN).collect();
        return Err(NameError::BadCharacters { name: shown });
    }
    if is_tool_id(name) {
        return Err(NameError::LooksLikeId {
            name: name.to_owned(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_rule() {
        for ok in ["a", "word_frequency", "x1_2", &"a".repeat(64)] {
            assert_eq!(validate_custom_name(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn refuses_names_in_the_form_of_an_id() {
        assert!(matches!(
            validate_custom_name("tool_0123456789abcdef"),
            Err(NameError::LooksLikeId { .. })
        ));
        for ok in [
            "tool_0123456789abcde",
            "tool_0123456789abcdef0",
            "tool_thing",
        ] {
            assert_eq!(validate_custom_name(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn refuses_everything_else() {
        assert_eq!(validate_custom_name(""), Err(NameError::Empty));
        assert_eq!(
            validate_custom_name(&"a".repeat(65)),
            Err(NameError::TooLong { len: 65 })
        );
        for bad in [
            "1abc", "_a", "Abc", "a-b", "a.b", "a b", "ａ", "a\u{0}", "naïve", "a\n",
        ] {
            assert!(
                matches!(
                    validate_custom_name(bad),
                    Err(NameError::BadCharacters { .. })
                ),
                "{bad:?}"
            );
        }
    }
}
