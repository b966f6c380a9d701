//! The naming rules for custom tools.
//!
//! - [`NameRule::Strict`] (the default): `^[a-z][a-z0-9_]*$`, at most 64 characters. Every such
//!   name is also a valid OpenAI and Anthropic function name, so it passes through every face
//!   and export unchanged.
//! - [`NameRule::Wide`] (the server runs with `--compat dynamic-mcp`): also dynamic-mcp's
//!   `^[a-zA-Z][a-zA-Z0-9._:-]{2,63}$` (`text.uppercase`, `data:parse-csv`). Such names are
//!   valid MCP names but not function names; exports map them ([`function_name`]).
//!
//! Under both rules a name in the form of a tool id (`tool_` and 16 hex digits) is refused:
//! every interface reads it as an id. Names that start with `dynamic.tool.` are reserved under
//! both rules: they are the dynamic-mcp control plane's.

/// Longest name a custom tool may have.
pub const MAX_NAME_LEN: usize = 64;

/// Names the MCP face uses for its own tools (the control plane and the discovery meta-tools).
/// A custom tool may not take one: MCP clients would see two tools of one name.
pub const RESERVED_NAMES: [&str; 13] = [
    "create_tool",
    "list_custom_tools",
    "get_custom_tool",
    "update_custom_tool",
    "delete_custom_tool",
    "toggle_custom_tool",
    "run_js_ephemeral",
    "manage_agents",
    "manage_prompts",
    "search_tools",
    "get_tool_help",
    "use_tool",
    "batch_use_tool",
];

/// The prefix of the dynamic-mcp control plane's names (`dynamic.tool.create` …).
pub const RESERVED_PREFIX: &str = "dynamic.tool.";

/// Whether `name` belongs to one of Toolsmith's own MCP tools (or to the `dynamic.tool.*`
/// names of `--compat dynamic-mcp`).
pub fn is_reserved(name: &str) -> bool {
    RESERVED_NAMES.contains(&name) || name.starts_with(RESERVED_PREFIX)
}

/// Whether `text` has the form of a custom tool id: `tool_` and 16 hex digits.
pub fn is_tool_id(text: &str) -> bool {
    text.strip_prefix("tool_")
        .is_some_and(|hex| hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Which names a server accepts for custom tools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum NameRule {
    /// `^[a-z][a-z0-9_]*$`, at most 64 characters.
    #[default]
    Strict,
    /// The strict rule, or dynamic-mcp's `^[a-zA-Z][a-zA-Z0-9._:-]{2,63}$`.
    Wide,
}

/// The shortest name dynamic-mcp's pattern allows.
pub const DYNAMIC_MCP_MIN_LEN: usize = 3;

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
    #[error(
        "tool name is {len} characters long; dynamic-mcp names have at least {DYNAMIC_MCP_MIN_LEN} (^[a-zA-Z][a-zA-Z0-9._:-]{{2,63}}$)"
    )]
    TooShort { len: usize },
    #[error(
        "tool name '{name}' is invalid: it must start with a letter and contain only letters, digits, '.', '_', ':' and '-' (^[a-zA-Z][a-zA-Z0-9._:-]{{2,63}}$), or follow ^[a-z][a-z0-9_]*$"
    )]
    BadWideCharacters { name: String },
}

/// Checks a custom tool name against `rule`.
pub fn validate_name(name: &str, rule: NameRule) -> Result<(), NameError> {
    match rule {
        NameRule::Strict => validate_custom_name(name),
        NameRule::Wide => validate_custom_name(name).or_else(|strict| {
            validate_dynamic_mcp_name(name).map_err(|wide| match wide {
                NameError::BadCharacters { .. }
                    if matches!(strict, NameError::BadCharacters { .. }) =>
                {
                    NameError::BadWideCharacters { name: shown(name) }
                }
                other => other,
            })
        }),
    }
}

/// Checks a name against dynamic-mcp's own rule: `^[a-zA-Z][a-zA-Z0-9._:-]{2,63}$`.
pub fn validate_dynamic_mcp_name(name: &str) -> Result<(), NameError> {
    let Some(first) = name.chars().next() else {
        return Err(NameError::Empty);
    };
    let len = name.chars().count();
    if len > MAX_NAME_LEN {
        return Err(NameError::TooLong { len });
    }
    // Characters before the length: "a\n" is refused for its newline, not for being short.
    let rest_ok = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-'));
    if !first.is_ascii_alphabetic() || !rest_ok {
        return Err(NameError::BadWideCharacters { name: shown(name) });
    }
    if len < DYNAMIC_MCP_MIN_LEN {
        return Err(NameError::TooShort { len });
    }
    if is_tool_id(name) {
        return Err(NameError::LooksLikeId {
            name: name.to_owned(),
        });
    }
    Ok(())
}

/// Longest name an OpenAI or Anthropic function may have.
const FUNCTION_NAME_MAX: usize = 64;

/// `name` as a function name of the OpenAI and Anthropic APIs (`^[a-zA-Z0-9_-]{1,64}$`):
/// unchanged when it already is one (every strict name), otherwise every other character
/// becomes `_` and 8 hex digits of the name's hash are appended, so two wide names that differ
/// only in `.` or `:` never map to the same function name, and a mapped name never equals a
/// strict one that has no such suffix.
pub fn function_name(name: &str) -> String {
    let is_function_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if !name.is_empty() && name.len() <= FUNCTION_NAME_MAX && name.chars().all(is_function_char) {
        return name.to_owned();
    }
    // FNV-1a: stable across builds and platforms, no dependency; collisions are not a
    // security matter here (the export also lists the real names).
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let suffix = format!("__{:08x}", hash as u32);
    let keep = FUNCTION_NAME_MAX - suffix.len();
    let mut out: String = name
        .chars()
        .map(|c| if is_function_char(c) { c } else { '_' })
        .take(keep)
        .collect();
    out.push_str(&suffix);
    out
}

fn shown(name: &str) -> String {
    name.chars().take(MAX_NAME_LEN).collect()
}

/// Checks a custom tool name against the strict rule.
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
        return Err(NameError::BadCharacters { name: shown(name) });
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
        // The wider dynamic-mcp pattern admits the id form too; it is refused all the same.
        for rule in [NameRule::Strict, NameRule::Wide] {
            assert!(
                matches!(
                    validate_name("tool_0123456789abcdef", rule),
                    Err(NameError::LooksLikeId { .. })
                ),
                "{rule:?}"
            );
        }
        assert!(matches!(
            validate_dynamic_mcp_name("tool_0123456789ABCDEF"),
            Err(NameError::LooksLikeId { .. })
        ));
        assert_eq!(
            validate_name("tool_0123456789abcdeg", NameRule::Wide),
            Ok(())
        );
    }

    #[test]
    fn the_wide_rule_takes_dynamic_mcps_names_and_the_strict_ones() {
        for ok in [
            "text.uppercase",
            "data.parse_csv",
            "Ab:c-d",
            "a",
            "word_frequency",
            &format!("A{}", "b".repeat(63)),
        ] {
            assert_eq!(validate_name(ok, NameRule::Wide), Ok(()), "{ok}");
        }
        assert!(matches!(
            validate_name("text.uppercase", NameRule::Strict),
            Err(NameError::BadCharacters { .. })
        ));
        for bad in ["1abc", ".abc", "a b c", "ab/c", "naïve", "a\n"] {
            assert!(
                matches!(
                    validate_name(bad, NameRule::Wide),
                    Err(NameError::BadWideCharacters { .. })
                ),
                "{bad:?}"
            );
        }
        assert_eq!(
            validate_dynamic_mcp_name("ab"),
            Err(NameError::TooShort { len: 2 })
        );
        assert_eq!(
            validate_dynamic_mcp_name(&"a".repeat(65)),
            Err(NameError::TooLong { len: 65 })
        );
    }

    #[test]
    fn the_dynamic_tool_prefix_is_reserved() {
        assert!(is_reserved("dynamic.tool.create"));
        assert!(is_reserved("dynamic.tool.mine"));
        assert!(is_reserved("run_js_ephemeral"));
        assert!(!is_reserved("dynamic.tools"));
    }

    #[test]
    fn function_names_are_kept_or_mapped_apart() {
        assert_eq!(function_name("word_frequency"), "word_frequency");
        let a = function_name("text.uppercase");
        let b = function_name("text:uppercase");
        assert_ne!(a, b);
        assert!(a.starts_with("text_uppercase__"), "{a}");
        let long = function_name(&format!("a.{}", "b".repeat(62)));
        assert_eq!(long.len(), 64);
        for mapped in [a, b, long] {
            assert!(
                mapped
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            );
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
