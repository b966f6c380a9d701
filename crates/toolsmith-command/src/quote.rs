//! POSIX shell quoting of one value: the only way an argument reaches a rendered command.

/// Wraps `value` in single quotes for a POSIX shell; each embedded `'` becomes `'\''`.
///
/// Inside single quotes a POSIX shell gives no character a special meaning, so the result is
/// always exactly one word whose content is `value`, byte for byte. The empty string becomes `''`.
#[must_use]
pub fn shell_quote(value: &str) -> String {
    let mut res = String::with_capacity(value.len() + 2);
    res.push('\'');
    for ch in value.chars() {
        if ch == '\'' {
            res.push_str("'\\''");
        } else {
            res.push(ch);
        }
    }
    res.push('\'');
    res
}

#[cfg(test)]
mod tests {
    use super::shell_quote;

    #[test]
    fn quotes_plain_empty_and_embedded_quotes() {
        assert_eq!(shell_quote("abc"), "'abc'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote("'"), "''\\'''");
        assert_eq!(shell_quote("$(id) `id` ;&|\n"), "'$(id) `id` ;&|\n'");
    }
}
